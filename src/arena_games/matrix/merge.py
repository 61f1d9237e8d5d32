"""Several study runs read as one: merged tables with one error control across runs, entrant
names a reader can tell apart, and a pooled test of the seed's pattern with its falsifier.

``arena study --merge RUN_DIR ... --out DIR`` writes, beside the figures:

- ``merged_cells.csv``: every cell of every run (entrant, listing, archetype, k, scored
  trials, score and interval, per-reference verdicts and the headline, the cell's flags), with
  the verdicts decided again by one Holm (or BH) procedure over *all* comparisons of all runs:
  a claim in the merged table survives the number of runs merged;
- ``merged_summary.json``: the same, plus the pooled pattern test per entrant and listing.

The seed's pattern, pre-registered here: in the **matching** games (:data:`MATCHING`) copies
score above uniform play, in the **symmetry-breaking** games (:data:`SYMMETRY_BREAKING`) below
it. The pooled test, per entrant and listing, weighs each cell's score minus the uniform score
by its scored trials (standard errors from the cells' intervals, cells independent) and tests
each group's pooled difference against 0 (two-sided z); the p-values join the merge's error
control. The pattern **holds** when the matching group is claimed above and the
symmetry-breaking group claimed below; it is **falsified** when either group is claimed on the
wrong side; otherwise it is **not shown**. Its falsifier for listing artefacts: a pattern that
holds under the shared listing but not under the independent listings is flagged as produced
by the listing order (the always-first player's signature).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from arena_core.outputs import atomic_write_text
from arena_core.playerspec import parse_player_spec
from arena_core.stats import benjamini_hochberg, holm, normal_cdf, normal_quantile

#: games where matching the copy's label pays (the seed: copies score above chance)
MATCHING = ("coordination", "stag_hunt")
#: games where the copies must break symmetry to do well (the seed: below chance)
SYMMETRY_BREAKING = ("anti_coordination", "battle_of_sexes", "chicken")
REFERENCES = ("nash", "uniform", "ceiling")
MERGED_FIELDS = (
    "entrant",
    "run",
    "listing",
    "archetype",
    "k",
    "scored",
    "trials",
    "score",
    "score_low",
    "score_high",
    "uniform_score",
    "vs_nash",
    "vs_uniform",
    "vs_ceiling",
    "verdict",
    "flags",
)


def entrant_name(spec: str) -> str:
    """A short readable name for a run's player spec: ``openai:<model>`` for a spec with a
    ``model`` option (the base URL and keys left out), else the name with its options."""
    try:
        parsed = parse_player_spec(spec)
    except Exception:  # noqa: BLE001 - a hand-edited summary: keep what it says
        return spec
    model = parsed.options.get("model")
    if model:
        extra = {k: v for k, v in parsed.options.items() if k in ("temperature", "top_p")}
        tail = "".join(f" {k}={v}" for k, v in extra.items())
        return f"{parsed.name}:{model}{tail}"
    return str(parsed)


def read_summary(run_dir: str | Path) -> dict[str, Any]:
    """A finished run's ``summary.json``; one clear ValueError when it is missing or not a study summary."""
    summary_path = Path(run_dir) / "summary.json"
    try:
        data = json.loads(summary_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(
            f"{run_dir} has no summary.json; give the output directory of a finished `arena study` run"
        ) from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{summary_path} is not valid JSON ({exc.msg}); rerun the study to rewrite it") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise ValueError(f"{summary_path} is not a study summary (no cells list)")
    return data


def _load(run_dir: Path) -> tuple[str, list[dict[str, Any]]]:
    data = read_summary(run_dir)
    config = data.get("config") or {}
    name = entrant_name(str(config.get("player", run_dir.name)))
    if not data.get("self_play", True):
        name = f"{name} vs {entrant_name(str(config.get('opponent')))}"
    return name, [c for c in data["cells"] if isinstance(c, dict)]


def _side(diff: float, rejected: bool) -> str:
    return "indistinguishable" if not rejected else ("above" if diff > 0 else "below")


def _pooled(cells: Sequence[dict[str, Any]], level: float) -> tuple[float, float, int] | None:
    """(pooled score - uniform, its p-value, scored trials) over ``cells``, or None."""
    z = normal_quantile(1 - (1 - level) / 2)
    num = den = var = 0.0
    for c in cells:
        n, s, lo, hi = c.get("scored") or 0, c.get("score"), c.get("score_low"), c.get("score_high")
        if n < 2 or s is None or lo is None or hi is None:
            continue
        se = max((hi - lo) / (2 * z), 1e-12)
        num += n * (s - c["uniform_score"])
        var += (n * se) ** 2
        den += n
    if den == 0:
        return None
    diff, se = num / den, math.sqrt(var) / den
    p = 2 * (1 - normal_cdf(abs(diff) / se))
    return diff, min(1.0, p), int(den)


def merge_tables(
    run_dirs: Iterable[str | Path],
    out_dir: str | Path,
    *,
    archetypes: Sequence[str] | None = None,
    alpha: float = 0.05,
    correction: str = "holm",
    level: float = 0.95,
) -> list[Path]:
    """Write ``merged_cells.csv`` and ``merged_summary.json`` (see the module docstring)."""
    dirs = [Path(d) for d in run_dirs]
    if not dirs:
        raise ValueError("merge needs at least one run directory")
    runs = [(_load(d), d) for d in dirs]
    names = [name for (name, _), _ in runs]
    rows: list[dict[str, Any]] = []
    for (name, cells), d in runs:
        entrant = name if names.count(name) == 1 else f"{name} [{d.name}]"
        for c in cells:
            if archetypes is None or c.get("archetype") in archetypes:
                rows.append({"entrant": entrant, "run": str(d), **c})
    if not rows:
        raise ValueError("none of the runs has cells for the archetypes asked for")
    family: list[tuple[str, Any, str, float]] = []  # (kind, index, reference/group, p)
    for i, r in enumerate(rows):
        for ref in REFERENCES:
            p = r.get(f"p_{ref}")
            if isinstance(p, (int, float)) and math.isfinite(p) and r.get("mean") is not None:
                family.append(("cell", i, ref, float(p)))
    patterns: list[dict[str, Any]] = []
    for entrant in dict.fromkeys(r["entrant"] for r in rows):
        for listing in dict.fromkeys(r["listing"] for r in rows if r["entrant"] == entrant):
            mine = [r for r in rows if r["entrant"] == entrant and r["listing"] == listing]
            entry: dict[str, Any] = {"entrant": entrant, "listing": listing}
            for group, games in (("matching", MATCHING), ("symmetry_breaking", SYMMETRY_BREAKING)):
                pooled = _pooled([r for r in mine if r["archetype"] in games], level)
                entry[group] = None if pooled is None else {"diff": pooled[0], "p": pooled[1], "scored": pooled[2]}
                if pooled is not None:
                    family.append(("pattern", len(patterns), group, pooled[1]))
            patterns.append(entry)
    decide = holm if correction == "holm" else benjamini_hochberg
    rejected = decide([p for *_, p in family], alpha) if family else []
    for (kind, i, ref, _), rej in zip(family, rejected):
        if kind == "cell":
            r = rows[i]
            r[f"vs_{ref}"] = _side(r["mean"] - r["comparisons"][ref]["value"], rej)
        else:
            g = patterns[i][ref]
            g["verdict"] = _side(g["diff"], rej)
    for r in rows:
        nash, uniform = r.get("vs_nash"), r.get("vs_uniform")
        r["verdict"] = (
            nash
            if nash == uniform and nash in ("above", "below")
            else ("no data" if (r.get("scored") or 0) < 2 else "indistinguishable")
        )
    for entry in patterns:
        m, s = entry["matching"], entry["symmetry_breaking"]
        mv, sv = (m or {}).get("verdict"), (s or {}).get("verdict")
        entry["pattern"] = (
            "holds"
            if (mv, sv) == ("above", "below")
            else "falsified"
            if mv == "below" or sv == "above"
            else "not shown"
        )
    for entry in patterns:
        if entry["listing"] == "shared" and entry["pattern"] == "holds":
            twin = next(
                (e for e in patterns if e["entrant"] == entry["entrant"] and e["listing"] == "independent"), None
            )
            if twin is not None and twin["pattern"] != "holds":
                entry["falsifier"] = (
                    f"the pattern holds under the shared listing but is {twin['pattern']} under independent listings: "
                    "it comes from the listing order, not from the labels"
                )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(MERGED_FIELDS)
    for r in rows:
        writer.writerow(
            [
                "; ".join(r.get("flags") or []) if f == "flags" else ("" if r.get(f) is None else r.get(f))
                for f in MERGED_FIELDS
            ]
        )
    atomic_write_text(out / "merged_cells.csv", buf.getvalue())
    summary = {
        "runs": [str(d) for d in dirs],
        "entrants": list(dict.fromkeys(r["entrant"] for r in rows)),
        "error_control": {
            "procedure": "Holm (family-wise error rate)"
            if correction == "holm"
            else "Benjamini-Hochberg (false discovery rate)",
            "alpha": alpha,
            "family": f"{len(family)} comparisons over {len(dirs)} runs: every cell against its references, and the pooled pattern tests",
        },
        "pattern": {"matching": list(MATCHING), "symmetry_breaking": list(SYMMETRY_BREAKING), "tests": patterns},
        "cells": [{f: r.get(f) for f in MERGED_FIELDS} for r in rows],
    }
    atomic_write_text(out / "merged_summary.json", json.dumps(summary, indent=1, allow_nan=False))
    return [out / "merged_cells.csv", out / "merged_summary.json"]
