"""Per-cell scoring against the matrix's reference points (shared note, section 3).

A cell is (player, archetype, k). Its metric is the mean welfare over trials (the matcher's
payoff for zero-sum hide-and-seek) with a bootstrap interval; the normalised score maps the
worst joint cell to 0 and the best to 1. "above"/"below" a baseline is claimed only when the
interval excludes it; otherwise the verdict is "indistinguishable".
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Sequence

import numpy as np

from arena_core.seeding import make_rng

from .equilibria import ReferencePoints

NEAR_WORST = 0.1  # "near the worst joint cell" means s <= 0.1


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    level: float


def bootstrap_mean(values: Sequence[float], *, level: float = 0.95, resamples: int = 4000, rng: np.random.Generator) -> Interval:
    """Percentile bootstrap interval of the mean.

    Resampling n trials with replacement is a multinomial draw over the distinct values, so the
    cost is O(resamples x distinct values), not O(resamples x n).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return Interval(float("nan"), float("nan"), float("nan"), level)
    distinct, counts = np.unique(x, return_counts=True)
    draws = rng.multinomial(x.size, counts / x.size, size=resamples)
    means = draws @ distinct / x.size
    alpha = (1 - level) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return Interval(float(x.mean()), float(low), float(high), level)


def verdict(interval: Interval, baseline: float) -> str:
    """'above' / 'below' only when the interval excludes the baseline."""
    if np.isnan(interval.mean):
        return "no data"
    if interval.low > baseline:
        return "above"
    if interval.high < baseline:
        return "below"
    return "indistinguishable"


@dataclass(frozen=True)
class CellScore:
    """The scored result of one (player, archetype, k) cell."""

    player: str
    archetype: str
    k: int
    metric: str
    trials: int
    scored: int  # trials that ended naturally (forfeits are counted in ``invalid``)
    invalid: int
    mean: float
    low: float
    high: float
    level: float
    score: float
    score_low: float
    score_high: float
    worst_cell: float
    best_cell: float
    baseline: float
    baseline_score: float
    verdict: str
    near_worst: bool  # the whole interval of s lies at or below NEAR_WORST
    symmetric_ceiling: float | None
    uniform: float
    sensitivity: dict[str, dict[str, float | str]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def score_cell(
    player: str,
    ref: ReferencePoints,
    values: Sequence[float],
    *,
    trials: int | None = None,
    level: float = 0.95,
    resamples: int = 4000,
    seed: int = 0,
) -> CellScore:
    """Score the per-trial metric ``values`` of one cell against ``ref``."""
    values = list(values)
    total = len(values) if trials is None else int(trials)
    rng = make_rng(seed, "bootstrap", ref.archetype, ref.k)
    ci = bootstrap_mean(values, level=level, resamples=resamples, rng=rng)
    sens = {}
    for name, value in ref.sensitivity.items():
        sens[name] = {"value": value, "score": ref.normalise(value), "verdict": verdict(ci, value)}
    return CellScore(
        player=player,
        archetype=ref.archetype,
        k=ref.k,
        metric=ref.metric,
        trials=total,
        scored=len(values),
        invalid=total - len(values),
        mean=ci.mean,
        low=ci.low,
        high=ci.high,
        level=level,
        score=ref.normalise(ci.mean),
        score_low=ref.normalise(ci.low),
        score_high=ref.normalise(ci.high),
        worst_cell=ref.worst_cell,
        best_cell=ref.best_cell,
        baseline=ref.baseline,
        baseline_score=ref.normalise(ref.baseline),
        verdict=verdict(ci, ref.baseline),
        near_worst=bool(ref.normalise(ci.high) <= NEAR_WORST) if values else False,
        symmetric_ceiling=ref.symmetric_ceiling,
        uniform=ref.uniform,
        sensitivity=sens,
    )
