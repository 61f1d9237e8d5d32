"""What the players' choices say about how they choose, and what a cell's verdicts can detect.

Position or label (issue 29). Under the shared listing both copies see the options in one
order, so "the first option listed" and "label A" are the same choice and a player that always
answers the first option listed matches its copy every time. Under independent listings each
copy sees its own random order, so a copy's listing *position* and its *label* come apart:
per cell and per copy, :func:`copy_behaviour` counts how its answers concentrate on one
position and on one label, with an exact binomial test of the top count against chance
(1/k, Bonferroni over the k options, and in a study over every copy and independent-listing
cell it tests, so a uniformly random player is flagged somewhere in at most 1% of studies).
A copy is

- **position-driven** in an independent-listing cell when its top position is significantly
  above chance and more concentrated than its top label (the always-first player);
- **deterministic** in any cell when at least :data:`DETERMINISTIC_MIN` answers all name one
  label, or all sit at one position, and that many alike has chance at most 1% for a uniform
  player (k = 2: 8 answers) (a scripted or greedy player; ``matrix_focal`` is
  deterministic but label-driven, never position-driven).

A position-driven copy seen in any independent cell flags every shared-listing cell of the
study too: there its matching can come from the listing order alone.

Detection limits (:func:`detection_limits`): for each verdict, the fewest scored trials at
which it can fire at all -- with the most extreme data possible (every trial at the best cell
for ``above``, at the worst for ``below`` and ``near_worst``), at the unadjusted level (the
study's error control only raises these) -- and, from :func:`arena_core.stats.deals_needed`,
the trials a cell needs to detect a difference of :data:`PLANNING_EFFECT` in score from
uniform play with 80% power (bounded metric, worst-case spread). A cell with fewer scored
trials than a verdict needs is flagged: that verdict could not have fired.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from arena_core.stats import cluster_mean, deals_needed

from .equilibria import reference_points
from .scoring import NEAR_WORST, CellScore

#: a top count at or below this p-value (exact binomial against 1/k, Bonferroni over k) is concentrated
CONCENTRATION_P = 0.01
#: answers that must all agree before a copy is called deterministic
DETERMINISTIC_MIN = 5
#: the score difference (worst cell 0, best cell 1) the planning number is for
PLANNING_EFFECT = 0.1
#: where :func:`detection_limits` stops looking (a verdict that needs more is "never" at this scale)
MAX_TRIALS = 5000


def binomial_upper(count: int, n: int, p: float) -> float:
    """P(X >= count) for X ~ Binomial(n, p), exactly."""
    if count <= 0:
        return 1.0
    return float(min(1.0, sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(count, n + 1))))


@dataclass(frozen=True)
class CopyBehaviour:
    """One copy's answers in one cell: how they concentrate on a listing position and on a label."""

    copy: int
    answered: int
    top_position: int | None  # 0-based listing position
    position_share: float | None
    position_p: float | None  # the top position count against chance, Bonferroni over k
    top_label: str | None
    label_share: float | None
    label_p: float | None
    position_driven: bool
    deterministic: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def copy_behaviour(
    rows: Sequence[dict[str, Any]], k: int, listing: str, copy: int, *, threshold: float = CONCENTRATION_P
) -> CopyBehaviour:
    """How ``copy`` (0: the player; 1: its copy or the opponent) chose over a cell's trial rows;
    ``threshold``: the p-value at or below which its top position counts as concentrated (the
    study divides :data:`CONCENTRATION_P` by the number of copies and independent cells it tests)."""
    positions: list[int] = []
    labels: list[str] = []
    for r in rows:
        seat = copy ^ int(r.get("seat_of_player") or 0)
        pos, label = r.get(f"position_{seat}"), r.get(f"label_{seat}")
        if pos in ("", None) or label in ("", None):
            continue  # the copy was never asked, or its answer was not read
        positions.append(int(pos))
        labels.append(str(label))
    n = len(positions)
    if n == 0:
        return CopyBehaviour(copy, 0, None, None, None, None, None, None, False, False)
    top_pos, pos_count = Counter(positions).most_common(1)[0]
    top_label, label_count = Counter(labels).most_common(1)[0]
    pos_p = min(1.0, k * binomial_upper(pos_count, n, 1 / k))
    label_p = min(1.0, k * binomial_upper(label_count, n, 1 / k))
    position_driven = listing == "independent" and pos_p <= threshold and pos_count > label_count
    # all n answers alike, and that unlikely by chance (k^(1-n) for a uniform player)
    deterministic = n >= DETERMINISTIC_MIN and (pos_count == n or label_count == n) and k ** (1 - n) <= CONCENTRATION_P
    return CopyBehaviour(
        copy, n, top_pos, pos_count / n, pos_p, top_label, label_count / n, label_p, position_driven, deterministic
    )


def behaviour_flags(copies: Sequence[CopyBehaviour]) -> list[str]:
    """The cell's flags for its copies' behaviour (empty when nothing stands out)."""
    flags = []
    for c in copies:
        if c.position_driven:
            flags.append(
                f"position-driven (copy {c.copy}): {c.position_share:.0%} of {c.answered} answers at listing position "
                f"{(c.top_position or 0) + 1} while the top label has {c.label_share:.0%} (p {c.position_p:.2g}); "
                "the verdict can come from listing order, not labels"
            )
        elif c.deterministic:
            what = f"label {c.top_label}" if c.label_share == 1 else f"listing position {(c.top_position or 0) + 1}"
            flags.append(
                f"deterministic (copy {c.copy}): every one of {c.answered} answers was {what}; "
                "the copies do not sample, so matching says little about coordination"
            )
    return flags


def shared_listing_flag(independent_cells: int, flagged_cells: int) -> str:
    """The flag every shared-listing cell gets once a copy was position-driven somewhere."""
    return (
        f"position-driven player (in {flagged_cells} of {independent_cells} independent-listing cells): under the "
        "shared listing its matching can come from listing order alone"
    )


@lru_cache(maxsize=512)
def detection_limits(archetype: str, k: int, level: float = 0.95) -> dict[str, int | None]:
    """Per verdict, the fewest scored trials at which it can fire at all (None: never, within
    :data:`MAX_TRIALS`), and ``planning``: trials for a :data:`PLANNING_EFFECT` score
    difference from uniform play with 80% power."""
    ref = reference_points(archetype, k)
    lo, hi = ref.worst_cell, ref.best_cell
    bounds = (lo, hi)
    alpha = 1 - level

    def fires(kind: str, n: int) -> bool:
        value = hi if kind == "above" else lo
        values = [value] * n
        if kind == "near_worst":
            c = cluster_mean(values, [1.0] * n, level, bounds=bounds)
            return ref.normalise(c.high) <= NEAR_WORST
        for null in (ref.baseline, ref.uniform):
            c = cluster_mean(values, [1.0] * n, level, bounds=bounds, null=null)
            wrong_side = c.estimate <= null if kind == "above" else c.estimate >= null
            if wrong_side or c.pvalue > alpha:
                return False
        return True

    def fewest(kind: str) -> int | None:
        if not fires(kind, MAX_TRIALS):
            return None
        a, b = 1, MAX_TRIALS  # fires(a) is False (fewer than 2 trials never score), fires(b) True
        while b - a > 1:
            mid = (a + b) // 2
            if fires(kind, mid):
                b = mid
            else:
                a = mid
        return b

    planning = deals_needed(PLANNING_EFFECT * (hi - lo), (hi - lo) / 2, level) if hi > lo else None
    return {
        "above": fewest("above"),
        "below": fewest("below"),
        "near_worst": fewest("near_worst"),
        "planning": planning,
    }


def limit_flags(limits: dict[str, int | None], scored: int) -> list[str]:
    """Flags for the verdicts this cell's scored trials are too few to show."""
    out = []
    for kind in ("above", "below", "near_worst"):
        need = limits.get(kind)
        if need is None:
            out.append(f"'{kind}' cannot fire in this cell at any trial count")
        elif scored < need:
            out.append(f"{scored} scored trials: '{kind}' cannot fire below {need}")
    return out


def listing_contrast(cells: Sequence[CellScore]) -> list[dict[str, Any]]:
    """Per (archetype, k) run under both listings: the two scores, their difference and
    verdicts. A shared-listing edge that vanishes under independent listings is the listing
    order at work, not the labels."""
    by = {(c.listing, c.archetype, c.k): c for c in cells}
    out = []
    for (listing, archetype, k), shared in by.items():
        twin = by.get(("independent", archetype, k))
        if listing != "shared" or twin is None:
            continue
        diff = None if shared.score is None or twin.score is None else shared.score - twin.score
        out.append(
            {
                "archetype": archetype,
                "k": k,
                "shared_score": shared.score,
                "independent_score": twin.score,
                "difference": diff,
                "shared_verdict": shared.verdict,
                "independent_verdict": twin.verdict,
            }
        )
    return out


def behaviour_summary(cells: Sequence[CellScore]) -> dict[str, Any]:
    """The study-wide reading of the players' behaviour (``summary.json``, the last lines)."""
    independent = [c for c in cells if c.listing == "independent"]
    driven = [c for c in independent if any(b["position_driven"] for b in c.behaviour)]
    deterministic = [c for c in cells if any(b["deterministic"] for b in c.behaviour)]
    if driven:
        note = (
            f"position-driven: in {len(driven)} of {len(independent)} independent-listing cells a copy's answers "
            "concentrate on one listing position, not one label; its shared-listing verdicts can come from listing "
            "order alone"
        )
    elif not independent:
        note = "no independent-listing cells: position and label cannot be told apart in this run"
    else:
        note = f"no copy concentrated on a listing position in {len(independent)} independent-listing cells"
    return {
        "position_driven": bool(driven),
        "position_driven_cells": len(driven),
        "independent_cells": len(independent),
        "deterministic_cells": len(deterministic),
        "note": note,
    }
