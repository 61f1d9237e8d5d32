"""Per-cell scoring against the matrix's reference points (shared note, section 3), with
intervals and p-values from :mod:`arena_core.stats` and one multiple-comparison control.

A cell is (player, listing, archetype, k). Its metric is the mean welfare over the trials that
were played and read (the matcher's payoff for zero-sum hide-and-seek); trials whose answer
was unreadable, that a player error ended, or in which the policy substituted a default move
are counted and left out. The interval is :func:`arena_core.stats.cluster_mean` with every
trial its own cluster (trials are independent) and the metric's range as bounds (so a cell
where every trial scored the same still gets a Wilson-type interval, never zero width).

Each cell is compared with three references: the pre-registered Nash baseline, uniform play
and the symmetric-play ceiling. The p-values of all comparisons of a study form one family;
Holm's procedure (default; ``benjamini_hochberg`` on request) decides which differences are
claimed. The headline verdict:

- ``above``: above the Nash baseline AND above uniform play ("coordinates above chance");
- ``below``: below the Nash baseline AND below uniform play;
- ``indistinguishable`` otherwise; ``no data`` with fewer than 2 scored trials.

The per-reference verdicts (``vs_nash``, ``vs_uniform``, ``vs_ceiling``) are reported beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from arena_core.stats import benjamini_hochberg, cluster_mean, holm

from .equilibria import ReferencePoints

NEAR_WORST = 0.1  # "near the worst joint cell" means s <= 0.1
Correction = Literal["holm", "bh"]
REFERENCES = ("nash", "uniform", "ceiling")


@dataclass(frozen=True)
class Comparison:
    """One cell against one reference value: the p-value (two-sided, from the cell's interval
    method) and the verdict after the study's multiple-comparison control."""

    reference: str
    value: float
    score: float
    pvalue: float | None
    verdict: str = "indistinguishable"  # "above", "below", "indistinguishable", "no data"


@dataclass(frozen=True)
class CellScore:
    """The scored result of one (player, listing, archetype, k) cell."""

    player: str
    listing: str
    archetype: str
    k: int
    metric: str
    trials: int  # trials run
    scored: int  # trials played to the end with every answer read (the verdicts' data)
    unparseable: int  # an answer named no label unambiguously
    illegal: int  # an answer named something that is not a legal label
    errors: int  # player errors: transport failures, timeouts, spending caps
    defaulted: int  # the policy substituted a default move (counted, excluded)
    mean: float | None
    low: float | None
    high: float | None
    level: float
    score: float | None
    score_low: float | None
    score_high: float | None
    worst_cell: float
    best_cell: float
    baseline: float
    baseline_score: float
    uniform: float
    uniform_score: float
    symmetric_ceiling: float | None
    ceiling_score: float | None
    comparisons: dict[str, Comparison]
    verdict: str
    near_worst: bool  # the whole interval of s lies at or below NEAR_WORST
    correction: str = "holm"
    flags: tuple[str, ...] = ()
    sensitivity: dict[str, dict[str, float | str | None]] = field(default_factory=dict)
    #: per copy, how its answers concentrate on listing positions and labels (matrix.behaviour)
    behaviour: tuple[dict[str, Any], ...] = ()
    #: per verdict, the fewest scored trials at which it can fire; "planning": see matrix.behaviour
    limits: dict[str, int | None] = field(default_factory=dict)

    @property
    def invalid(self) -> int:
        """Trials left out of the verdicts (unreadable, illegal, errors, defaulted)."""
        return self.trials - self.scored

    @property
    def vs_nash(self) -> str:
        return self.comparisons["nash"].verdict

    @property
    def vs_uniform(self) -> str:
        return self.comparisons["uniform"].verdict

    @property
    def vs_ceiling(self) -> str:
        return self.comparisons["ceiling"].verdict if "ceiling" in self.comparisons else "n/a"

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["invalid"] = self.invalid
        out["flags"] = list(self.flags)
        for kind in ("above", "below", "near_worst"):
            out[f"min_trials_{kind}"] = self.limits.get(kind)
        out["position_driven"] = any(b.get("position_driven") for b in self.behaviour)
        out["deterministic"] = any(b.get("deterministic") for b in self.behaviour)
        for name in REFERENCES:
            out[f"vs_{name}"] = self.comparisons[name].verdict if name in self.comparisons else "n/a"
            out[f"p_{name}"] = self.comparisons[name].pvalue if name in self.comparisons else None
        return out


def _side(mean: float, value: float, rejected: bool) -> str:
    if not rejected:
        return "indistinguishable"
    return "above" if mean > value else "below"


def score_cell(
    player: str,
    ref: ReferencePoints,
    values: Sequence[float],
    *,
    listing: str = "shared",
    trials: int | None = None,
    unparseable: int = 0,
    illegal: int = 0,
    errors: int = 0,
    defaulted: int = 0,
    level: float = 0.95,
    flags: Sequence[str] = (),
    behaviour: Sequence[dict[str, Any]] = (),
    limits: dict[str, int | None] | None = None,
) -> CellScore:
    """Score the per-trial metric ``values`` (scored trials only) of one cell against ``ref``.

    Verdicts here are per comparison at the unadjusted level; :func:`control` applies the
    study-wide multiple-comparison procedure and sets the final verdicts."""
    values = [float(v) for v in values]
    total = len(values) + unparseable + illegal + errors + defaulted if trials is None else int(trials)
    refs = {"nash": ref.baseline, "uniform": ref.uniform}
    if ref.symmetric_ceiling is not None:
        refs["ceiling"] = ref.symmetric_ceiling
    bounds = (ref.worst_cell, ref.best_cell)
    comparisons: dict[str, Comparison] = {}
    mean = low = high = None
    if len(values) >= 2:
        for name, value in refs.items():
            c = cluster_mean(values, [1.0] * len(values), level, bounds=bounds, null=value)
            mean, low, high = c.estimate, c.low, c.high
            comparisons[name] = Comparison(
                name, value, ref.normalise(value), c.pvalue, _side(c.estimate, value, c.pvalue <= 1 - level)
            )
    else:
        for name, value in refs.items():
            comparisons[name] = Comparison(name, value, ref.normalise(value), None, "no data")
    sens: dict[str, dict[str, float | str | None]] = {}
    for name, value in ref.sensitivity.items():
        if mean is None:
            sens[name] = {"value": value, "score": ref.normalise(value), "verdict": "no data", "pvalue": None}
        else:
            c = cluster_mean(values, [1.0] * len(values), level, bounds=bounds, null=value)
            sens[name] = {
                "value": value,
                "score": ref.normalise(value),
                "pvalue": c.pvalue,
                "verdict": _side(c.estimate, value, c.pvalue <= 1 - level) + " (unadjusted)",
            }
    cell = CellScore(
        player=player,
        listing=listing,
        archetype=ref.archetype,
        k=ref.k,
        metric=ref.metric,
        trials=total,
        scored=len(values),
        unparseable=unparseable,
        illegal=illegal,
        errors=errors,
        defaulted=defaulted,
        mean=mean,
        low=low,
        high=high,
        level=level,
        score=None if mean is None else ref.normalise(mean),
        score_low=None if low is None else ref.normalise(low),
        score_high=None if high is None else ref.normalise(high),
        worst_cell=ref.worst_cell,
        best_cell=ref.best_cell,
        baseline=ref.baseline,
        baseline_score=ref.normalise(ref.baseline),
        uniform=ref.uniform,
        uniform_score=ref.normalise(ref.uniform),
        symmetric_ceiling=ref.symmetric_ceiling,
        ceiling_score=None if ref.symmetric_ceiling is None else ref.normalise(ref.symmetric_ceiling),
        comparisons=comparisons,
        verdict="no data",
        near_worst=bool(high is not None and ref.normalise(high) <= NEAR_WORST),
        flags=tuple(flags),
        sensitivity=sens,
        behaviour=tuple(behaviour),
        limits=dict(limits or {}),
    )
    return replace(cell, verdict=headline(cell))


def headline(cell: CellScore) -> str:
    """``above`` needs both the Nash baseline and uniform play beaten; ``below`` both undercut."""
    if cell.scored < 2:
        return "no data"
    nash, uniform = cell.vs_nash, cell.vs_uniform
    if nash == uniform and nash in ("above", "below"):
        return nash
    return "indistinguishable"


def control(cells: Sequence[CellScore], *, alpha: float = 0.05, correction: Correction = "holm") -> list[CellScore]:
    """Apply one multiple-comparison procedure to every comparison of every cell (one family):
    Holm (family-wise error rate at ``alpha``) or Benjamini-Hochberg (false discovery rate at
    ``alpha``); returns the cells with their final per-reference and headline verdicts."""
    if correction not in ("holm", "bh"):
        raise ValueError(f"correction must be 'holm' or 'bh', got {correction!r}")
    keys, pvalues = [], []
    for i, cell in enumerate(cells):
        for name, comp in cell.comparisons.items():
            if comp.pvalue is not None and math.isfinite(comp.pvalue):
                keys.append((i, name))
                pvalues.append(comp.pvalue)
    rejected = (holm if correction == "holm" else benjamini_hochberg)(pvalues, alpha) if pvalues else []
    decided = dict(zip(keys, rejected))
    out = []
    for i, cell in enumerate(cells):
        comps = {}
        for name, comp in cell.comparisons.items():
            if comp.pvalue is None or cell.mean is None:
                comps[name] = replace(comp, verdict="no data")
            else:
                comps[name] = replace(comp, verdict=_side(cell.mean, comp.value, decided.get((i, name), False)))
        new = replace(cell, comparisons=comps, correction=correction)
        out.append(replace(new, verdict=headline(new)))
    return out
