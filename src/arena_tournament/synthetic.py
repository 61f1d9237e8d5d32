"""Synthetic tournaments with a known truth, for coverage tests and benchmarks.

Finishing orders are Plackett–Luce draws (sort ``θ + u + Gumbel``) where ``u`` is a
per-player-per-deal effect shared by every table and rotation of that deal (sd ``deal_sd``
logits): a deal that favours one player favours it at every table, as real deals do. The
truths are the deal-averaged (population) quantities the intervals claim to cover.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from arena_core.seeding import make_rng
from arena_core.stats import Floats

from .ratings import Outcome, StageData, fit_plackett_luce
from .results import GameResult


def simulate(
    theta: Floats,
    tables: Sequence[Sequence[int]],
    deals: int,
    *,
    deal_sd: float = 0.5,
    seed: int = 0,
    deal_offset: int = 0,
) -> list[Outcome]:
    """Every table plays every deal in every cyclic rotation; the cluster label is the deal."""
    th: np.ndarray = np.asarray(theta, dtype=float)
    v = len(th)
    names = [f"p{i}" for i in range(v)]
    rng = make_rng(seed, "synthetic")
    out = []
    for d in range(deal_offset, deal_offset + deals):
        u = deal_sd * rng.standard_normal(v)
        for t in tables:
            k = len(t)
            for r in range(k):
                seats = [t[(s - r) % k] for s in range(k)]
                noisy = th[seats] + u[seats] + rng.gumbel(size=k)
                place = np.argsort(np.argsort(-noisy))
                out.append(
                    Outcome(
                        f"{d}/{'|'.join(names[i] for i in seats)}",
                        f"deal {d}",
                        tuple(names[i] for i in seats),
                        tuple(float(k - p) for p in place),
                    )
                )
    return out


def true_head_to_head(theta: Floats, deal_sd: float) -> np.ndarray:
    """(n, n): the deal-averaged probability that i finishes above j (any table they share):
    ``E_u[logistic(θ_i - θ_j + u_i - u_j)]`` by Gauss–Hermite quadrature."""
    th: np.ndarray = np.asarray(theta, dtype=float)
    x, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    diff = th[:, None] - th[None, :]
    s = np.sqrt(2.0) * deal_sd
    share: np.ndarray = np.sum(w[None, None, :] / (1.0 + np.exp(-(diff[:, :, None] + s * x[None, None, :]))), axis=2)
    return share


def true_ratings(
    theta: Floats, tables: Sequence[Sequence[int]], deal_sd: float, *, draws: int = 20000, seed: int = 0
) -> np.ndarray:
    """Centred log-strengths the Plackett–Luce fit converges to on unlimited deals of this
    design: the fit to the expected stage statistics (order probabilities averaged over the
    deal effect by Monte Carlo with ``draws`` deals)."""
    th: np.ndarray = np.asarray(theta, dtype=float)
    v = len(th)
    rng = make_rng(seed, "true_ratings")
    set_index: dict[frozenset[Any], int] = {}
    set_weight: dict[int, float] = {}
    wins = np.zeros(v)
    for t in tables:
        t = list(t)
        k = len(t)
        strength = np.exp(th[t][None, :] + deal_sd * rng.standard_normal((draws, k)))  # (draws, k)
        for order in itertools.permutations(range(k)):
            prob = np.ones(draws)
            left = strength.sum(axis=1)
            for pos in order:
                prob *= strength[:, pos] / left
                left = left - strength[:, pos]
            p = float(prob.mean()) * k  # k rotations, each the same in distribution
            for r in range(k - 1):
                members = frozenset(t[i] for i in order[r:])
                u = set_index.setdefault(members, len(set_index))
                set_weight[u] = set_weight.get(u, 0.0) + p
                wins[t[order[r]]] += p
    sets = np.zeros((len(set_index), v))
    for members, u in set_index.items():
        sets[u, list(members)] = 1.0
    weight = np.zeros((1, len(set_index)))
    for u, w in set_weight.items():
        weight[0, u] = w
    data = StageData(v, sets, weight, wins[None, :])
    return fit_plackett_luce(data, regularization=1e-9, tol=1e-12, max_iter=500)


def coverage(
    theta: Floats,
    tables: Sequence[Sequence[int]],
    deals: int,
    *,
    deal_sd: float = 0.5,
    trials: int = 100,
    resamples: int = 300,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, Any]:
    """Simulate ``trials`` tournaments and count how often each kind of interval covers its
    deal-averaged truth: ratings, pairwise rating differences, head-to-head shares. Also the
    share of tournaments with any falsely resolved pair (rating pairs or head-to-head, where
    the truth is on the other side or equal), the share of zero-width intervals, and the share
    of tournaments in which every pair's interval covers at once (``all_*``: the simultaneous
    intervals printed beside the verdicts, and the plain ones for comparison)."""
    from .ratings import ELO_PER_LOGIT, head_to_head, plackett_luce_ratings

    th: np.ndarray = np.asarray(theta, dtype=float)
    v = len(th)
    names = [f"p{i}" for i in range(v)]
    truth = true_ratings(th, tables, deal_sd, seed=seed) * ELO_PER_LOGIT
    truth_h2h = true_head_to_head(th, deal_sd)
    hit = {"rating": [0, 0], "difference": [0, 0], "head_to_head": [0, 0]}
    per_trial: dict[str, list[float]] = {k: [] for k in hit}
    false_any = {"rating_pairs": 0, "head_to_head": 0}
    zero_width = 0
    every = {f"all_{k}{s}": 0 for k in ("difference", "head_to_head") for s in ("", "_simultaneous")}
    for t in range(trials):
        before = {k: tuple(v) for k, v in hit.items()}
        outcomes = simulate(th, tables, deals, deal_sd=deal_sd, seed=seed * 100_003 + t)
        fit = plackett_luce_ratings(outcomes, names, resamples=resamples, seed=t, level=level, base=0.0)
        iv = fit.rating_interval
        assert iv is not None  # resamples > 0: every rating has an interval
        assert fit.pair_low is not None and fit.pair_high is not None  # resamples > 0: pairs are tested
        assert fit.pair_resolved is not None and fit.pair_diff is not None
        hit["rating"][0] += int(np.sum((iv[:, 0] <= truth) & (truth <= iv[:, 1])))
        hit["rating"][1] += v
        zero_width += int(np.sum(iv[:, 1] - iv[:, 0] <= 0))
        iu = np.triu_indices(v, 1)
        tdiff = (truth[:, None] - truth[None, :])[iu]
        hit["difference"][0] += int(np.sum((fit.pair_low[iu] <= tdiff) & (tdiff <= fit.pair_high[iu])))
        hit["difference"][1] += len(tdiff)
        every["all_difference"] += bool(np.all((fit.pair_low[iu] <= tdiff) & (tdiff <= fit.pair_high[iu])))
        assert fit.pair_sim_low is not None and fit.pair_sim_high is not None  # set with the pairs
        every["all_difference_simultaneous"] += bool(
            np.all((fit.pair_sim_low[iu] <= tdiff) & (tdiff <= fit.pair_sim_high[iu]))
        )
        covered = {"": True, "_simultaneous": True}
        wrong = fit.pair_resolved[iu] & (np.sign(fit.pair_diff[iu]) != np.sign(tdiff))
        false_any["rating_pairs"] += bool(wrong.any())
        bad = False
        for p in head_to_head(outcomes, names, level=level):
            a, b = names.index(p.a), names.index(p.b)
            true_p = truth_h2h[a, b]
            if p.interval is None:  # too few deals or games for an interval: nothing to cover
                continue
            hit["head_to_head"][0] += p.interval[0] <= true_p <= p.interval[1]
            covered[""] &= p.interval[0] <= true_p <= p.interval[1]
            covered["_simultaneous"] &= p.simultaneous is not None and p.simultaneous[0] <= true_p <= p.simultaneous[1]
            hit["head_to_head"][1] += 1
            zero_width += p.interval[1] - p.interval[0] <= 0
            bad |= p.resolved and (p.a_above_b - 0.5) * (true_p - 0.5) <= 0
        false_any["head_to_head"] += bad
        for suffix, ok in covered.items():
            every[f"all_head_to_head{suffix}"] += ok
        for k, (h, n) in hit.items():
            per_trial[k].append((h - before[k][0]) / max(1, n - before[k][1]))
    out: dict[str, Any] = {k: float(h / n) for k, (h, n) in hit.items()}
    # Monte-Carlo standard error with the tournament as the unit (intervals within one are correlated)
    out["mc_se"] = {
        k: float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan") for k, v in per_trial.items()
    }
    out.update({f"any_false_{k}": float(c / trials) for k, c in false_any.items()})
    out.update({k: float(c / trials) for k, c in every.items()})
    out["zero_width"] = int(zero_width)
    out["counts"] = {k: n for k, (h, n) in hit.items()}
    out["trials"] = trials
    return out


def luck_slope_games(
    deals: int, slope_a: float, slope_b: float, seed: int, *, skill_a: float = 0.0, stream: str = "luck-slopes"
) -> list[GameResult]:
    """Two-player results of A, B and a reference R, each playing both seats of every deal against
    one opponent O: the deal-and-seat luck (sd 1) is shared, A and B respond to it with their own
    slopes (R with slope 1), each game adds noise (sd 0.3); A's true edge is ``skill_a``, B's 0."""
    rng = make_rng(seed, stream)
    out = []
    for d in range(deals):
        luck = rng.standard_normal(2)
        for who, slope, skill in (("A", slope_a, skill_a), ("B", slope_b, 0.0), ("R", 1.0, 0.0)):
            for seat in range(2):
                x = skill + slope * luck[seat] + 0.3 * rng.standard_normal()
                seats = [who, "O"] if seat == 0 else ["O", who]
                out.append(
                    GameResult.model_construct(
                        key=f"{d}/{'|'.join(seats)}",
                        cluster=f"{d}",
                        table=0,
                        deal=d,
                        seed=d,
                        rotation=seat,
                        seats=seats,
                        reason="natural",
                        returns=[x, -x] if seat == 0 else [-x, x],
                        plies=1,
                        faults=[],
                        unplayed=False,
                    )
                )
    return out
